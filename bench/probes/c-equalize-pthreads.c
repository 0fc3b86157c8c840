// Probe behind bench/results/h100-c-pthreads-equalize.jsonl: 8-bit histogram + LUT in plain C, threads made per pass
// (static split), to see what compiled loops alone give on the GPU machine. Build: gcc -O2 -static -pthread
// c-equalize-pthreads.c -o hbp; run: ./hbp THREADS WIDTH HEIGHT (synthetic pixels; medians of 30, ms).
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static uint8_t *d,*o; static size_t n; static int T; uint32_t hs[64][256]; static uint8_t lut[256];
static void* hist(void*a){int k=(int)(intptr_t)a; size_t s=n/T*k,e=k==T-1?n:n/T*(k+1); uint32_t h[4][256]; memset(h,0,sizeof h);
 const uint32_t*w=(const uint32_t*)(d+s); size_t m=(e-s)/4; for(size_t i=0;i<m;i++){uint32_t v=w[i]; h[0][v&255]++;h[1][(v>>8)&255]++;h[2][(v>>16)&255]++;h[3][v>>24]++;}
 for(int b=0;b<256;b++) hs[k][b]=h[0][b]+h[1][b]+h[2][b]+h[3][b]; return 0;}
static void* lutp(void*a){int k=(int)(intptr_t)a; size_t s=n/T*k,e=k==T-1?n:n/T*(k+1); for(size_t i=s;i<e;i++) o[i]=lut[d[i]]; return 0;}
static void run(void*(*f)(void*)){pthread_t t[64]; for(int k=0;k<T;k++) pthread_create(&t[k],0,f,(void*)(intptr_t)k); for(int k=0;k<T;k++) pthread_join(t[k],0);}
int main(int argc,char**argv){ T=atoi(argv[1]); size_t w=atoi(argv[2]),h=atoi(argv[3]); n=w*h; d=malloc(n); o=malloc(n);
 for(size_t i=0;i<n;i++) d[i]=((i*2654435761u)>>24)&255 ^ (i>>12)&255; for(int i=0;i<256;i++)lut[i]=255-i; memset(o,0,n);
 double ts[30],hh[30],ll[30];
 for(int r=0;r<30;r++){ double t=now(); run(hist); double th=now()-t; t=now(); run(lutp); double tl=now()-t; ts[r]=th+tl; hh[r]=th; ll[r]=tl;}
 double*arrs[3]={ts,hh,ll}; for(int a=0;a<3;a++){double*x=arrs[a]; for(int i=0;i<30;i++)for(int j=i+1;j<30;j++) if(x[j]<x[i]){double y=x[i];x[i]=x[j];x[j]=y;}}
 printf("{\"threads\":%d,\"size\":\"%zux%zu\",\"histMedian\":%.3f,\"lutMedian\":%.3f,\"equalizeMedian\":%.3f}\n",T,w,h,hh[15],ll[15],ts[15]);}
